"""The Repository tab: browse, search and filter checkpoints, import files or a folder, remove one."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from personalq.repository.service import CheckpointFilter, CheckpointNotFound, Repository, StoredCheckpoint

COLUMNS = ["id", "name", "family", "version", "kind", "styles", "created", "trigger"]


def _rows(checkpoints: list[StoredCheckpoint]) -> list[list[str]]:
    return [
        [c.id, c.name, c.family or "", c.version or "", c.kind, ", ".join(c.styles), f"{c.created_at:%Y-%m-%d}", c.canonical_trigger or ""]
        for c in checkpoints
    ]


def _gallery(checkpoints: list[StoredCheckpoint]) -> list[tuple[str, str]]:
    return [(c.preview_path, f"{c.name} ({c.canonical_trigger or 'no trigger'})") for c in checkpoints if c.preview_path and Path(c.preview_path).exists()]


def build_repository_tab(repository: Repository) -> None:
    def browse(text: str, style: str, kind: str):
        checkpoints = repository.list(CheckpointFilter(text=text or None, style=style or None, kind=kind or None))
        return _rows(checkpoints), _gallery(checkpoints), f"{len(checkpoints)} checkpoints"

    def import_(folder: str, files: list[str] | None):
        paths = [Path(folder)] if folder and folder.strip() else []
        paths += [Path(f) for f in files or []]
        if not paths:
            return "Give a folder path or upload files to import.", *browse("", "", "")[:2]
        report = repository.import_paths(paths)
        lines = [f"{o.status}: {Path(o.path).name} {o.checkpoint_id or ''} {o.message}".strip() for o in report.outcomes]
        return "\n".join([report.summary(), *lines]), *browse("", "", "")[:2]

    def remove(checkpoint_id: str):
        try:
            removed = repository.remove(checkpoint_id.strip())
            message = f"Removed {removed.name}."
        except CheckpointNotFound as exc:
            message = str(exc)
        return message, *browse("", "", "")[:2]

    with gr.Row():
        text = gr.Textbox(label="Search", placeholder="name, subject, tag...", scale=3)
        style = gr.Textbox(label="Style", placeholder="anime, sketch...", scale=1)
        kind = gr.Dropdown(["", "lora", "dreambooth", "textual_inversion", "checkpoint"], value="", label="Kind", scale=1)
    count = gr.Markdown()
    table = gr.Dataframe(headers=COLUMNS, interactive=False, wrap=True, elem_id="repo-table")
    gallery = gr.Gallery(label="Previews", columns=8, height=260, elem_id="repo-gallery")
    with gr.Accordion("Import or remove", open=False):
        with gr.Row():
            folder = gr.Textbox(label="Folder or file path on the server", elem_id="import-path", scale=3)
            uploads = gr.File(label="Or upload card / model files", file_count="multiple", scale=2)
        import_button = gr.Button("Import", elem_id="import-button")
        with gr.Row():
            remove_id = gr.Textbox(label="Checkpoint id to remove", scale=3)
            remove_button = gr.Button("Remove", variant="stop", scale=1)
        status = gr.Textbox(label="Result", lines=6, interactive=False, elem_id="import-status")

    for trigger in (text.submit, style.submit, kind.change):
        trigger(browse, [text, style, kind], [table, gallery, count])
    import_button.click(import_, [folder, uploads], [status, table, gallery])
    remove_button.click(remove, [remove_id], [status, table, gallery])
    return browse, (text, style, kind), (table, gallery, count)
