"""How many bad-input cells are written by hand and how many come from option specs.

    PYTHONPATH=. python tests/_bad_input_counts.py

A cell is hand-written when its kind comes from the row's own table entry
(``tests/_bad_input_table.py``), generated when the entry point's ``Options`` spec
produced it (``tests/_bad_input_spec.py``); every row also has one valid-call cell, and
joint cells test several arguments together.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_bad_input as table  # noqa: E402


def counts():
    hand = generated = 0
    for row in table.ROWS:
        for arg in dict.fromkeys([*row.args, *row.spec_args]):
            written = table.kinds(row.args[arg]) if arg in row.args else {}
            for kind in table._row_kinds(row, arg):
                if (arg, kind) in row.skip:
                    continue
                if kind in written:
                    hand += 1
                else:
                    generated += 1
    total = len(table._cells())
    valid = len(table.ROWS)
    return {"rows": valid, "cells": total, "hand-written": hand, "generated": generated,
            "valid": valid, "joint": total - hand - generated - valid}


if __name__ == "__main__":
    print("  ".join(f"{k} {v}" for k, v in counts().items()))
