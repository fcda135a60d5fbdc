"""Chart archives (`.tgz`) read the one bounded way: streaming, capped, refused past the caps
(bot/tarball/reader.py, the numbers in bot/tarball/limits.py). No other module of the bot opens
a tar or gzip stream (tests/test_archive_readers.py holds it to that)."""
