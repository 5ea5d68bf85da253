"""`python -m dicecup ...` runs the command line, like the `dicecup` script."""

from dicecup.cli import main

if __name__ == "__main__":
    main()
