"""``agent-contract matrix``: ``check`` against several releases of a framework, each in
a throwaway environment built with uv. The framework is described by the target its
binding registers (:mod:`.target`); this package imports no framework.

- :mod:`.target`: what the matrix knows about a framework (:class:`~.target.MatrixTarget`);
- :mod:`.run`: planning, building and checking the environments;
- :mod:`.packages`: where this project's two distributions come from, and the floors;
- :mod:`.publish`: a release's publish time (for the ``dated`` companions);
- :mod:`.runner`: running one command;
- :mod:`.report`: the boundary x release report and its formats;
- :mod:`.command`: the subcommand.
"""

__all__: list[str] = []
