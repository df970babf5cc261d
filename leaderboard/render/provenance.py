"""What a row's details say of where it came from: the command a stranger types to reproduce it,
its code's source, the plugins and hardware it ran with."""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath

from statbench.leaderboard.repo.source import (
    BUILTIN,
    NOT_PUBLISHED,
    SourceRecord,
    install_line,
    published,
    unpublished_reasons,
)

#: what a reproduce command puts in place of the recorded ``--data-dir``: an absolute path
#: anyone can type, to be filled with the task's files (the board names the data checksum)
DATA_DIR_PLACEHOLDER = "$HOME/statbench-data/{task}"


def reproduce_line(res, source) -> str | None:
    """What a stranger types to reproduce a row: the ``pip install`` of its recorded source
    (``source``: the submission's :class:`~statbench.leaderboard.repo.source.SourceRecord`, when
    it is published and holds any third-party distribution), then :func:`reproduce_command`.
    A source not published, or not recorded, installs nothing here: :func:`source_words` says
    so beside the command, never a ``pip install`` of a distribution no index may hold. None
    when the recorded command is not a statbench command line (nothing to offer a copy of)."""
    command = reproduce_command(res)
    if command is None:
        return None
    install = install_line(source, note=False) if isinstance(source, SourceRecord) else None
    return f"{install} && {command}" if install else command


def source_words(res, source) -> str:
    """What the row's details say of its code's source ("" when the run used only
    statbench's own plugins and nothing else is to be said)."""
    if isinstance(source, SourceRecord):
        if not published(source):
            return f"{NOT_PUBLISHED}: {'; '.join(unpublished_reasons(source))}"
        wheels = source.wheel_files()
        return f"the wheel{'s' if len(wheels) > 1 else ''} {', '.join(wheels)} stored in its submission folder" \
            if wheels else ""
    if isinstance(source, str):  # a source.json that did not read
        return f"{NOT_PUBLISHED}: {source}"
    third = sorted({f"{plugin.distribution} {plugin.version or ''}".strip()
                    for record in (res.task, res.model, res.reranker) if record is not None
                    for plugin in (getattr(record, "plugin", None),)
                    if plugin is not None and plugin.distribution and plugin.distribution != BUILTIN})
    if not third:
        return ""
    return (f"source not recorded: {', '.join(third)} (installed where it ran; submit it to a results repository "
            "with `statbench submit`, which records an installable source)")


def reproduce_command(res) -> str | None:
    """The recorded command as a stranger types it: ``--data-dir`` pointing at an explicit
    absolute folder instead of the author's path (the plugins it needs: :func:`reproduce_line`),
    and the stranger's own ``statbench`` instead of the path the author ran. None when the
    recorded command is not a statbench command line (not shell words, or its program not
    ``statbench``): every command statbench records is one, so anything else is not offered
    as what to type (the row's details still show it, as recorded)."""
    import shlex

    try:
        words = shlex.split(res.command)
    except ValueError:
        return None
    if not words or PurePosixPath(words[0]).name != "statbench" or PureWindowsPath(words[0]).name != "statbench":
        return None
    # the task's name from the results, quoted: only $HOME is left for the shell to expand
    placeholder = DATA_DIR_PLACEHOLDER.format(task=shlex.quote(res.task.name))
    out, skip = ["statbench"], False
    for word in words[1:]:
        if skip:
            out.append(placeholder)
            skip = False
        elif word == "--data-dir":
            out.append(shlex.quote(word))
            skip = True
        elif word.startswith("--data-dir="):
            out.append(f"--data-dir={placeholder}")
        else:
            out.append(shlex.quote(word))
    return " ".join(out)


def plugin_text(plugin) -> str:
    """``name (distribution version)`` of a :class:`~statbench.results.record.PluginRecord`."""
    return f"{plugin.name} ({plugin.distribution or 'in-process'} {plugin.version or ''})".strip()


def hardware_words(environment: dict) -> str:
    """Where the run's time was spent: the GPU when a model used one, else the platform."""
    accelerator = environment.get("accelerator")
    python = f"Python {environment['python']}" if environment.get("python") else ""
    return ", ".join(x for x in (accelerator or "CPU", environment.get("platform", ""), python) if x)
