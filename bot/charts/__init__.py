"""The chart pipeline: which charts a change touches, their dependencies fetched and archives read,
every profile rendered and linted at both sides in the render processes, and the other open PRs'
renders for the duplicates check. The one layer below the App with threads and git processes; it
imports the model, git and Helm's adapters (`bot/git/`, `bot/render/`), never the review core or
a check."""
