"""Run every benchmark and print its figures."""

from bench import (
    bench_am,
    bench_clients,
    bench_compiler,
    bench_cpu,
    bench_decode,
    bench_jit,
    bench_launch,
    bench_mem,
    bench_native,
    bench_peer_copy,
    bench_profile,
    bench_reduce,
    bench_sanitize,
    bench_shader,
    bench_sqtt_gfx9,
    bench_tiled,
    bench_trace,
    bench_train,
)


def main() -> None:
    bench_decode.main()
    bench_mem.main()
    bench_shader.main()
    bench_jit.main()
    bench_sanitize.main()
    bench_launch.main()
    bench_am.main()
    bench_peer_copy.main()
    bench_clients.main()
    bench_trace.main()
    bench_profile.main()
    bench_sqtt_gfx9.main()
    bench_compiler.main()
    bench_reduce.main()
    bench_train.main()
    bench_tiled.main()
    bench_cpu.main()
    bench_native.main([])


if __name__ == "__main__":
    main()
