import sys

from bot.cli.docs_pages import main

sys.exit(main())
