"""wiremcp"""
