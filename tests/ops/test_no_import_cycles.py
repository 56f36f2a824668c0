"""No module of the application imports itself back through others (issue 34): the layering of pyproject.toml
([tool.importlinter], checked by `lint-imports`) says which room may import which; this says no two modules lean on each
other, inside a room as across rooms."""

import grimp

APPLICATION = ("casino", "tables", "seances", "cashbox", "books", "floor")


def cycles(graph):
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_of_the_application_is_in_an_import_cycle():
    graph = grimp.build_graph(*APPLICATION, cache_dir=None)
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for module in ("a", "a.b", "a.c", "a.d"):
        graph.add_module(module)
    graph.add_import(importer="a.b", imported="a.c")
    graph.add_import(importer="a.c", imported="a.b")
    graph.add_import(importer="a.d", imported="a.b")
    assert cycles(graph) == [["a.b", "a.c"]]
