"""``python -m kubetide``: the same command line as the ``kubetide`` script."""

from kubetide.cli import main

if __name__ == "__main__":
    main(prog_name="kubetide")
