"""The package version, in a module of its own: a module that shows it (the HTTP API, the MCP
server, the LLM client's user agent) imports it without importing the package's lazy API."""

__version__ = "0.1.0"
