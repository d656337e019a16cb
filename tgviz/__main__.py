import sys

from tgviz.cli import main

sys.exit(main())
