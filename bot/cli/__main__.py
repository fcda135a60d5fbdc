"""`python -m bot.cli`: the command line, as the `chart-review` script runs it."""

from bot.cli.main import main

raise SystemExit(main())
