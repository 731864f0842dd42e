"""`python -m annotator` runs the command line."""

from annotator.cli import main

if __name__ == "__main__":
    main()
