"""Run every benchmark and print its figures."""

from bench import bench_decode, bench_mem


def main() -> None:
    bench_decode.main()
    bench_mem.main()


if __name__ == "__main__":
    main()
