"""The plugin system: hook specifications (:mod:`.hookspecs`), discovery of entry points
and the registry of named plugins (:mod:`.plugins`), and the checks a plugin's output
passes before anything uses it (:mod:`.checks`).
"""
