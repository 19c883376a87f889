"""The `cirulla` command line: play, hint, analyze, arena, serve."""
