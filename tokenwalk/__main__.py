import sys

from tokenwalk.cli import main

sys.exit(main())
