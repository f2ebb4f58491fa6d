"""Optimise one shard directory in this process: python -m qdrantedge.optimize DIR.

The server runs this in a child process on a copy of a live shard
(optimizer.py), so the optimisation never holds the server's GIL.
"""

import sys

import qdrant_edge as e


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m qdrantedge.optimize SHARD_DIR", file=sys.stderr)
        return 2
    shard = e.EdgeShard.load(argv[1])
    changed = shard.optimize()
    shard.flush()
    shard.close()
    print("optimised" if changed else "already optimal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
