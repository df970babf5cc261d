"""What a build keeps between builds, so that a rebuild does only what changed (issue 22).

- :mod:`.records`: each validated results file, pickled, keyed by its content.
- :mod:`.rowviews`: each row's view; :mod:`.fragments`: each row's markup.
- :mod:`.boardkept`: the per-board store those two share.
- :mod:`.sigcache`: each pair's significance figures, keyed by the two rows' per-query scores.
- :mod:`.runcopies`: the run files' gzipped copies and their sha256.
- :mod:`.incremental`: the site's manifest, so an unchanged board keeps its files.
"""
