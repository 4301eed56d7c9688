"""Thin skins over the library: the CLI, the MCP server and the HTTP API."""
