"""What a person sees on the terminal: logging to the console and run.log
(:mod:`.console`) and progress bars (:mod:`.progress`).
"""
