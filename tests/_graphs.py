"""A depth-first check that an import graph has no circle, for the area layout tests."""


def assert_acyclic(graph):
    """Raise ``AssertionError("import circle: a -> b -> a")`` at the first circle found in
    ``graph`` (``{module: set of modules it imports}``), visiting modules in sorted order."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                raise AssertionError("import circle: " + " -> ".join(path + [node, nxt]))
            if nxt not in state:
                visit(nxt, path + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
