"""The command line (and the Action's entry point). Importing the package tunes the process for
reviews (bot/review_process.py) before the rest of the command line is imported: its ~470 modules'
classes, dataclasses and models are containers that the default collector walks some 20 times
during the import to find no cycle, 5-7% of the import's CPU."""

from bot.review_process import tune_for_reviews

tune_for_reviews()
