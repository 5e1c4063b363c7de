"""LangChain binding."""
