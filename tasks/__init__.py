"""Task definitions: one JSON file per task (the data) and one loader module per task."""
