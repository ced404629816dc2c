"""The code blocks of an answer (context/code.py), found as a Markdown reader sees them."""

from __future__ import annotations

from jupyter_tree_chat.context import CodeBlock, code_blocks

ANSWER = """Here you go:

```python
import pandas as pd
df = pd.read_csv("a.csv")
```

1. Then, in a list:

   ~~~bash
   pip install tabulate
   ~~~

````markdown
```python
nested
```
````

    indented = True

Inline `code` is not a block. An unclosed fence runs to the end:

```
last
"""


def test_every_code_block_in_order_exactly_as_written():
    assert code_blocks(ANSWER) == [
        CodeBlock('import pandas as pd\ndf = pd.read_csv("a.csv")\n', "python"),
        CodeBlock("pip install tabulate\n", "bash"),
        CodeBlock("```python\nnested\n```\n", "markdown"),
        CodeBlock("indented = True\n", ""),
        CodeBlock("last\n", ""),
    ]


def test_an_answer_without_code_has_no_blocks():
    assert code_blocks("Just prose, with `inline` code.") == []
