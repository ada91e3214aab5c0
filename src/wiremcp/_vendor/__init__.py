"""Third-party files shipped unchanged with wiremcp, each with its licence and a README saying where it came from.

Nothing here is imported as Python: the files are read as package data
(``importlib.resources.files("wiremcp._vendor.ext_apps")``).
"""
