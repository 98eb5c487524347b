"""Report how many golden pairs the codec gets right, per encoding, with sample failures.

    python -m tools.isa_report [ENCODING ...] [--show N]
"""

import argparse

from tests.support.isa_golden import check_pair, pairs_by_encoding


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("encodings", nargs="*")
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args()
    total_ok = total = 0
    for enc, pairs in sorted(pairs_by_encoding().items()):
        if args.encodings and enc not in args.encodings:
            continue
        fails = [(d, t, why) for d, t in pairs if (why := check_pair(d, t))]
        total += len(pairs)
        total_ok += len(pairs) - len(fails)
        print(f"{enc:8s} {len(pairs) - len(fails):6d}/{len(pairs):<6d}")
        for d, t, why in fails[:args.show]:
            print(f"    {d.hex():24s} {t}\n        -> {why}")
    print(f"total    {total_ok}/{total}")


if __name__ == "__main__":
    main()
