"""Built-in models, one subpackage per model family. Each model module is its own plugin,
named by an entry point in the ``statbench`` group of statbench's pyproject, exactly as a
third-party plugin is."""
