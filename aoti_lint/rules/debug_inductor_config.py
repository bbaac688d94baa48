"""AOTI202 debug-inductor-config: a debug ``torch._inductor.config`` key switched on (assignment,
``config.patch``, ``inductor_configs=``/``options=``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aoti_lint.knowledge.debug_switches import (
    CONFIG_DICT_KEYWORDS,
    INDUCTOR_CONFIG,
    SWITCHES_BY_CONFIG_KEY,
)
from aoti_lint.knowledge.references import AOTI_DEBUGGING_GUIDE, INDUCTOR_CONFIG_SOURCE
from aoti_lint.rules.base import AstModule, AstReader, AstRule, Invalid, Valid, holds, tokens_match
from aoti_lint.rules.config_key_writes import NAMED_FOR_THE_API, SWITCHES_BY_LAST_NAME, ConfigKeyWrites
from aoti_lint.rules.debug_switches import (
    CHAINED,
    GAP,
    ON_VALUE,
    is_word_byte,
    may_follow,
    opens_call,
    quoted_setting_pattern,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class _KeyForms:
    """How code that sets one config key to a literal that may be on spells it: its last name written after a
    `.` (``.debug = True``) or passed as a keyword (``patch(debug=1)``), or the whole key in quotes (a dict entry
    ``{"trace.enabled": True}``, a call's first of two arguments ``patch("debug", "1")``, a subscript assignment
    ``options["debug"] = 1``); a dotted key also spells its other parts (in an import or an attribute chain)."""

    parts: tuple[bytes, ...]
    key: bytes
    # Regular expressions, compiled (and cached by `re`) on first use: importing the rules stays cheap.
    quoted: bytes
    written: bytes

    @classmethod
    def of(cls, key: str) -> _KeyForms:
        parts = tuple(part.encode() for part in key.split("."))
        quoted = quoted_setting_pattern(re.escape(key.encode()), ON_VALUE)
        written = re.escape(parts[-1]) + rb"[\s)]*=(?!=)" + GAP + rb"(?:" + ON_VALUE + b"|" + CHAINED + b")"
        return cls(parts, key.encode(), quoted, written)

    def in_bytes(self, data: bytes) -> bool:
        if not tokens_match((self.parts,), data):
            return False
        # One pass over the occurrences of the key's last name (a `find` each, at C speed) for both forms; `re`
        # would search each on its own. The quoted key's pattern starts with a quote, which
        # `re` would try at every quote of the file.
        key, name = self.key, self.parts[-1]
        ahead = len(key) - len(name)  # the bytes of a dotted key before its last name
        # The last name as a word: `config.debug =`, `patch(debug=`, not `is_debug =` nor `debug = True` (a name of
        # the module). A dotted key is set so only as an attribute (`config.trace.enabled = True`), never by a keyword
        # (`flags(enabled=True)`, in most files).
        follows = _DOT if len(self.parts) > 1 else _DOT_OR_ARGUMENT
        quoted = written = None
        resume = 0  # as ``finditer``: no match of the written form starts inside the one before
        at = data.find(name)
        while at != -1:
            start = at - ahead
            if start >= 1 and data[start - 1] in _QUOTES and data.startswith(key, start):
                quoted = quoted or re.compile(self.quoted)
                match = quoted.match(data, start - 1)
                # Two positional arguments: the key is a call's first (not a tuple's, nor `f(a, "k", v)`'s).
                if match and (match.group("settled") or match.group("entry") or opens_call(data, start - 1)):
                    return True
            if at >= resume:
                written = written or re.compile(self.written)
                match = written.match(data, at)
                if match:
                    resume = match.end()
                    if (at == 0 or not is_word_byte(data[at - 1])) and may_follow(data, at, follows):
                        return True
            at = data.find(name, at + 1)
        return False


_DOT = frozenset(b".")
_DOT_OR_ARGUMENT = frozenset(b".(,")  # an attribute, or a keyword argument


# A key is set through torch._inductor.config (assignment, patch: both spell `_inductor`), or in a dict passed
# as `inductor_configs=` or as `options=` to a compile function.
_QUOTES = b"\"'"
_CONFIG_CONTEXTS = ((b"_inductor",), (b"inductor_configs",), (b"compile", b"options"))
# What the first two contexts share: a file without it (most) costs one scan for both, not two.
_INDUCTOR = b"inductor"
_KEY_FORMS = tuple(_KeyForms.of(key) for key in SWITCHES_BY_CONFIG_KEY)


class DebugInductorConfig(AstRule):
    """
    ## What it does
    Finds debug keys of `torch._inductor.config` switched on in Python: assignments under any import form
    (`torch._inductor.config.nan_asserts = True`, `from torch._inductor import config`,
    `import torch._inductor.config as cfg`, nested keys such as `config.aot_inductor.debug_compile`),
    `config.patch(...)` with a keyword, a dict or a key and a value (as a call, decorator or context
    manager), and keys of the dict passed as `inductor_configs=` to `aoti_compile_and_package` or as
    `options=` to `torch._export.aot_compile`, `torch._inductor.aot_compile` and `torch.compile`, including
    a dict built in a variable of the same scope; the dict may be a display (its `**{...}` entries too) or a
    call of `dict` (its keywords, and the keys set afterwards in `options = dict(BASE)`). A dict bound to a name
    the new API gives its config dict, `inductor_configs` (a variable, or a dataclass field whose
    `default_factory` returns it), is one wherever it goes; a `patch` reached through a name bound to it
    (`patch = torch._inductor.config.patch`) is `config.patch`.

    The keys are `nan_asserts`, `runtime_triton_nan_asserts`, `debug`, `debug_index_asserts`,
    `trace.enabled`, `aot_inductor.debug_compile`, `aot_inductor.debug_intermediate_value_printer`,
    `aot_inductor.filtered_kernel_names`, `aot_inductor.dump_aoti_minifier`, `triton.debug_sync_graph` and
    `triton.debug_sync_kernel`. Off values (`False`, `None`, `0`, `"0"`), values that are not literals and
    settings inside an `if` whose condition mentions "debug" are not reported.

    ## Why is this bad?
    Every one of these keys is read when the model is compiled and is baked into what Inductor generates:
    NaN checks with a sync after each kernel, a synchronisation after every launch, a value printer around
    each kernel, an unoptimised library with debug symbols. A compile script that leaves one on ships a slow
    package; the package must be rebuilt without it.

    ## Fix safety
    The fix removes the assignment statement, the `patch` argument or the dict entry. The last key of a
    container takes it along: `options={...}` / `inductor_configs={...}` go (an empty dict means what no
    argument means), a `config.patch` left empty goes with its decorator, its statement, or its `with` (the
    body moves one indent out). Where the emptied call cannot go (`with ... as name`, inside an expression,
    a body with a multi-line string) there is no fix. An import of `torch._inductor.config` under a name of
    its own goes once nothing uses it. It is unsafe: the key may be wanted there, e.g. in a script that
    exists to debug.
    There is no fix in a file that is a debugging tool on purpose: one under a `tools/`, `debug/` or
    `debugging/` folder (`scripts/debug/` too), or whose name has the word `debug`, `minify`, `minifier`,
    `repro` or `reproducer` (`run_debug.sh`, `minify_graph.py`); the finding stays. To silence such files,
    use per-file-ignores (docs/configuration.md, "Debugging tools").
    Add `# noqa: AOTI202` to keep it.
    """

    code = "AOTI202"
    name = "debug-inductor-config"
    references = (AOTI_DEBUGGING_GUIDE, INDUCTOR_CONFIG_SOURCE)
    summary = "A debug key of `torch._inductor.config` is switched on"
    fix_availability = "sometimes"
    # Necessary tokens; could_match below also wants one of the key's forms (see _KeyForms).
    triggers = tuple((*forms.parts, *context) for forms in _KEY_FORMS for context in _CONFIG_CONTEXTS)
    # Each context holds one: most files hold neither, and the screen settles them without the test below.
    screen_tokens = (_INDUCTOR, b"options")

    @classmethod
    def could_match(cls, data: bytes) -> bool:
        # "debug", "enabled" and "compile" are in most files' bytes; a key's forms (see _KeyForms) are not.
        in_context = tokens_match(_CONFIG_CONTEXTS if holds(data, _INDUCTOR) else _CONFIG_CONTEXTS[2:], data)
        return in_context and any(forms.in_bytes(data) for forms in _KEY_FORMS)

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # `root.x.key = V` resolves to the config only when `root` is bound by an absolute import; a key in a
        # literal setting (dict entry, keyword, `patch(K, V)`, `d[K] = V`) counts when something can take it:
        # a `patch`, or a compile function given `inductor_configs=` / `options=`.
        for root, attr, value in code.attribute_writes:
            switches = SWITCHES_BY_LAST_NAME.get(attr, ())
            if not any(switch.is_on_value(value) for switch in switches):
                continue
            # `cfg = torch._inductor.config`, `c = cfg.trace`: a name bound to an attribute, which the reading follows
            if root in code.import_bound or _binds_an_attribute(root, code.text):
                return True
        reached = code.reached
        compilers = {name.rsplit(".", 1)[-1] for name in CONFIG_DICT_KEYWORDS}
        passes_dict = bool(code.keywords & set(CONFIG_DICT_KEYWORDS.values())) and bool(reached & compilers)
        if not (passes_dict or "patch" in reached or NAMED_FOR_THE_API in code.identifiers):
            return False
        for key, value in code.literal_settings:
            switch = SWITCHES_BY_CONFIG_KEY.get(key)
            if switch is not None and switch.is_on_value(value):
                return True
        return False

    @classmethod
    def reader(cls, module: AstModule) -> AstReader:
        return ConfigKeyWrites(cls, module)

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """`torch._inductor.config` imported under a name of its own that the removed keys were the last users
        of (a bare `import torch._inductor.config` also binds `torch`, and stays)."""
        from aoti_lint.fixes.unused_imports import drop_unused

        return drop_unused(
            text,
            lambda module, name, alias: (
                (module == INDUCTOR_CONFIG and name is None and alias is not None)
                or (module == INDUCTOR_CONFIG.rsplit(".", 1)[0] and name == "config")
            ),
        )

    VALID = [
        Valid(
            """
            import torch
            cfg = torch._inductor.config
            cfg.max_autotune = True
            tracer = profiler.trace
            tracer.enabled = True
            """
        ),
        Valid(
            """
            from torch._inductor import config

            config.nan_asserts = False
            config.aot_inductor.debug_intermediate_value_printer = "0"
            config.max_autotune = True
            config.compile_threads = 8
            config.debug = flag
            print(config.debug)
            """
        ),
        Valid(
            """
            import torch

            if args.debug:
                torch._inductor.config.trace.enabled = True
            torch._inductor.aoti_compile_and_package(ep, inductor_configs={"max_autotune": True})
            """
        ),
        Valid(
            """
            class Config:
                debug = True

            options = {"nan_asserts": True}
            run(options=options)
            """
        ),
        Valid(
            """
            import torch

            dict = lambda **kwargs: {}
            options = dict(BASE, nan_asserts=True)
            options["debug"] = flag
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=options)
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=dict(trace={"enabled": True}))
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch._inductor.config as cfg

            cfg.nan_asserts = True
            cfg.max_autotune = True
            compile_model()
            """,
            line=3,
            column=1,
            message_contains="rebuild the package without it",
            fixed="""
            import torch._inductor.config as cfg

            cfg.max_autotune = True
            compile_model()
            """,
        ),
        Invalid(
            """
            from torch._inductor import config

            config.aot_inductor.debug_compile = True
            """,
            line=3,
        ),
        Invalid(
            """
            from dataclasses import dataclass, field


            @dataclass
            class ExportConfig:
                inductor_configs: dict = field(default_factory=lambda: {"max_autotune": True, "trace.enabled": True})
            """,
            line=6,
            column=83,
            fixed="""
            from dataclasses import dataclass, field


            @dataclass
            class ExportConfig:
                inductor_configs: dict = field(default_factory=lambda: {"max_autotune": True})
            """,
        ),
        Invalid(
            """
            import torch

            patch = torch._inductor.config.patch


            @patch(nan_asserts=True)
            def export(model, inputs):
                return torch._inductor.aoti_compile_and_package(torch.export.export(model, inputs))
            """,
            line=6,
            column=8,
            fixed="""
            import torch

            patch = torch._inductor.config.patch


            def export(model, inputs):
                return torch._inductor.aoti_compile_and_package(torch.export.export(model, inputs))
            """,
        ),
        Invalid(
            """
            import torch

            @torch._inductor.config.patch(debug_index_asserts=True)
            def build(ep):
                with torch._inductor.config.patch({"triton.debug_sync_kernel": True}):
                    return torch._inductor.aoti_compile_and_package(ep)
            """,
            count=2,
        ),
        Invalid(
            """
            import torch

            BASE = {"max_autotune": True}
            options = dict(BASE)
            options["debug_index_asserts"] = True
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=options)
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=dict(max_autotune=True, nan_asserts=True))
            torch._inductor.aoti_compile_and_package(ep, inductor_configs={**BASE, **{"trace.enabled": True}})
            """,
            count=3,
            fixed="""
            import torch

            BASE = {"max_autotune": True}
            options = dict(BASE)
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=options)
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=dict(max_autotune=True))
            torch._inductor.aoti_compile_and_package(ep, inductor_configs={**BASE})
            """,
        ),
        Invalid(
            """
            import torch

            options = {"max_autotune": True}
            options["aot_inductor.debug_intermediate_value_printer"] = "3"
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=options)
            """,
            line=4,
            column=9,
        ),
        Invalid(
            """
            import torch

            compiled = torch.compile(model, options={"trace.enabled": True})
            """,
            line=3,
            column=42,
        ),
        Invalid(
            """
            import torch
            cfg = torch._inductor.config
            c = cfg.trace
            c.enabled = True
            """,
            line=4,
            message_contains="torch._inductor.config.trace.enabled",
        ),
    ]


def _binds_an_attribute(name: str, text: str) -> bool:
    """Whether a line of ``text`` is `name = a.b` (the statement the reading follows a name through)."""
    import re

    pattern = rf"(?m)^[ \t]*{re.escape(name)}[ \t]*=[ \t]*[A-Za-z_][\w.]*\.[A-Za-z_]\w*[ \t]*(?:#.*)?$"
    return re.search(pattern, text) is not None
