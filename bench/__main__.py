"""Run every benchmark and print its figures."""

from bench import bench_decode, bench_mem, bench_shader


def main() -> None:
    bench_decode.main()
    bench_mem.main()
    bench_shader.main()


if __name__ == "__main__":
    main()
