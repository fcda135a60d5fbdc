"""The report's renderings, each a public interface: for now the JSON report's schema
(`schema/report-1.json`, what `Report.to_json` writes, `"schema": 1`).

This package is to hold every rendering of a report (issue 37): the markdown, SARIF and workflow
annotations will move here from bot/engine/ and bot/cli/. It imports only the standard library
(.importlinter), so that any layer, and any consumer, may read the schema."""
