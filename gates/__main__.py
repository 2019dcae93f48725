"""`python -m gates` is `gate-check`."""

from gates.frontends.cli import console

if __name__ == "__main__":  # a worker process of a history run imports this module too (`spawn`)
    console()
