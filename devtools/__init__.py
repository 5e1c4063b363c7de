"""Repository-only development tools: the generators of the measured documents in
``docs/``. Not shipped in any wheel; run them from the repository root:

- ``uv run python -m devtools.langchain_migration > docs/MIGRATION.md``
- ``uv run python -m devtools.pydantic_ai_migration > docs/MIGRATION_PYDANTIC_AI.md``
- ``uv run python -m devtools.parameter_map > docs/PARAMETER_MAP.md``
- ``uv run python -m devtools.middleware_matrix > docs/MIDDLEWARE.md``

Each document is held fresh by a test that renders it again and compares
(``tests/suite/test_migration_doc.py``, ``tests/contract/test_migration_pydantic_ai.py``,
``tests/suite/test_parameter_map.py``, ``tests/stack/test_middleware_matrix.py``).
:mod:`devtools.checklist` renders what both bindings' migration checklists share.
"""
