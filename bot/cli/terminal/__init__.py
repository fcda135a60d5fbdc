"""The report on a terminal, rendered with rich: headings, a verdict line, the findings grouped by
check, the rendered diff coloured. Imported only once stdout is known to be a terminal, so that
rich is never loaded on the review path (a pipe, a file, the App, the Action)."""
