"""Run every benchmark and print its figures."""

from bench import bench_decode


def main() -> None:
    bench_decode.main()


if __name__ == "__main__":
    main()
