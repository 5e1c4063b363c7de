"""The private helpers of the contract's one pass per call (see
:mod:`agent_contract_langchain.middleware`).

``ContractMiddleware``'s hooks call them in the order the work happens, each module
once per call, and none of them calls back into the middleware:

- a model call: :mod:`.prepare` (close the last batch, check before the model, offer
  the allowed tools), the model itself, :mod:`.record` (judge the response, plan the
  batch);
- a tool call: :mod:`.prepare` (answer it now, or admit it and build the request to run),
  :mod:`.run` (under the contract's executor, or as an approved write), :mod:`.record`
  (the reply and the state update of a ``Command``).

:mod:`.requests` reads a LangChain request (the tools offered, the arguments the model
sees); the gate uses it too.
"""

__all__: list[str] = []
