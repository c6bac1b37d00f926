"""The article layer: which worked example uses which model and machine, the request, the toys,
the cited facts, and the namespace `n` the prose prints. It imports tokenwalk; tokenwalk never imports it."""
