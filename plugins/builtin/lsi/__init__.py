"""The LSI classifier: articles as classes.
"""
