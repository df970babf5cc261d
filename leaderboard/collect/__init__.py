"""Results files into board rows: found under a folder, validated, grouped into boards.

- :mod:`.reading`: find the results files, read and check each (in worker processes when many),
  supersede older results of one configuration, group the rows into boards.
- :mod:`.rows`: a row (one configuration's results) and the board it belongs to, named.
- :mod:`.identity`: what a configuration is (model, parameters, reranker, pool), as a key.
- :mod:`.rowheads`: the small part of each record that places its row, kept so that a rebuild
  loads no record of an unchanged board.
"""
