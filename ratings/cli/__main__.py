"""``python -m ratings.cli``: the ``ratings`` program."""

from ratings.cli.app import program

__all__: list[str] = []

if __name__ == "__main__":
    program()
