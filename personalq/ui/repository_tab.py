"""The Repository tab: browse, search and filter checkpoints; an admin imports files or a folder, removes one,
rebuilds the index (see :mod:`personalq.access` for who may)."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from personalq.access import TooManyAttempts, WriteAccess, WriteRefused
from personalq.config import Settings
from personalq.repository.errors import RepositoryUnavailable
from personalq.repository.service import CheckpointFilter, CheckpointNotFound, Repository, StoredCheckpoint
from personalq.ui.media import published_preview, store_uploads
from personalq.ui.visitor import client_of, username_of
from personalq.web.upload_gate import SET_COOKIE_JS, UploadPasses

COLUMNS = ["id", "name", "family", "version", "kind", "styles", "created", "trigger"]


def _rows(checkpoints: list[StoredCheckpoint]) -> list[list[str]]:
    return [
        [
            c.id,
            c.name,
            c.family or "",
            c.version or "",
            c.kind,
            ", ".join(c.styles),
            f"{c.created_at:%Y-%m-%d}",
            c.canonical_trigger or "",
        ]
        for c in checkpoints
    ]


def _gallery(checkpoints: list[StoredCheckpoint], previews_dir: Path) -> list[tuple[str, str]]:
    shown = ((published_preview(c.preview_path, previews_dir), c) for c in checkpoints)
    return [(path, f"{c.name} ({c.canonical_trigger or 'no trigger'})") for path, c in shown if path]


def build_admin_sign_in(access: WriteAccess, admin: gr.State, passes: UploadPasses) -> None:
    """The token box that lets this browser session write; hidden when writes need no sign-in. A session that signs
    in also gets an upload pass, kept by its page as a cookie (see :mod:`personalq.web.upload_gate`)."""

    def sign_in(token: str, request: gr.Request):  # -> (may this session write, what to say, upload pass)
        try:
            ok = access.sign_in(token or "", client_of(request))
        except TooManyAttempts as exc:
            return False, str(exc), ""
        if not ok:
            return False, "Wrong token.", ""
        return True, "Signed in: this session may change the repository.", passes.issue()

    with gr.Accordion("Admin", open=False, visible=not access.open):
        if access.disabled_reason:
            gr.Markdown(access.disabled_reason, elem_id="writes-disabled")
        token = gr.Textbox(label="Admin token", type="password", elem_id="admin-token")
        button = gr.Button("Sign in", elem_id="admin-sign-in")
        status = gr.Markdown(elem_id="admin-status")
        upload_pass = gr.Textbox(visible="hidden", elem_id="upload-pass")
    button.click(sign_in, [token], [admin, status, upload_pass], api_visibility="private").then(
        None, [upload_pass], None, js=SET_COOKIE_JS
    )


def build_repository_tab(
    repository: Repository, settings: Settings, access: WriteAccess, admin: gr.State, passes: UploadPasses
):
    def browse(text: str, style: str, kind: str):
        checkpoints = repository.list(CheckpointFilter(text=text or None, style=style or None, kind=kind or None))
        return _rows(checkpoints), _gallery(checkpoints, settings.previews_dir), f"{len(checkpoints)} checkpoints"

    def write(action, *args, is_admin: bool, request: gr.Request | None):
        """Run ``action`` if this session may write; the result line and the refreshed table either way."""
        try:
            access.require(is_admin, username_of(request))
            message = action(*args)
        except (WriteRefused, RepositoryUnavailable) as exc:
            message = str(exc)
        return message, *browse("", "", "")[:2]

    def import_(folder: str, files: list[str] | None) -> str:
        paths = [Path(folder.strip())] if folder and folder.strip() else []
        if files:
            paths.append(store_uploads(files, settings.uploads_dir))
        if not paths:
            return "Give a folder path or upload files to import."
        report = repository.import_paths(paths)
        lines = [
            f"{o.status}: {Path(o.path).name} {o.checkpoint_id or ''} {o.message}".strip() for o in report.outcomes
        ]
        return "\n".join([report.summary(), *lines])

    def remove(checkpoint_id: str) -> str:
        try:
            return f"Removed {repository.remove(checkpoint_id.strip()).name}."
        except CheckpointNotFound as exc:
            return str(exc)

    def reindex() -> str:
        return f"Index rebuilt from the database: {repository.sync_index(rebuild=True)}"

    with gr.Row():
        text = gr.Textbox(label="Search", placeholder="name, subject, tag...", scale=3)
        style = gr.Textbox(label="Style", placeholder="anime, sketch...", scale=1)
        kind = gr.Dropdown(
            ["", "lora", "dreambooth", "textual_inversion", "checkpoint"], value="", label="Kind", scale=1
        )
    count = gr.Markdown()
    table = gr.Dataframe(headers=COLUMNS, interactive=False, wrap=True, elem_id="repo-table")
    gallery = gr.Gallery(label="Previews", columns=8, height=260, elem_id="repo-gallery")
    build_admin_sign_in(access, admin, passes)
    with gr.Accordion("Import or remove", open=False):
        with gr.Row():
            folder = gr.Textbox(label="Folder or file path on the server", elem_id="import-path", scale=3)
            uploads = gr.File(
                label="Or upload card / model files (they land together in one folder)",
                file_count="multiple",
                scale=2,
                elem_id="import-files",
            )
        import_button = gr.Button("Import", elem_id="import-button")
        with gr.Row():
            remove_id = gr.Textbox(label="Checkpoint id to remove", scale=3)
            remove_button = gr.Button("Remove", variant="stop", scale=1)
            reindex_button = gr.Button("Rebuild index", scale=1, elem_id="reindex-button")
        status = gr.Textbox(label="Result", lines=6, interactive=False, elem_id="import-status")

    def import_clicked(folder_: str, files: list[str] | None, is_admin: bool, request: gr.Request):
        return write(import_, folder_, files, is_admin=is_admin, request=request)

    def remove_clicked(checkpoint_id: str, is_admin: bool, request: gr.Request):
        return write(remove, checkpoint_id, is_admin=is_admin, request=request)

    def reindex_clicked(is_admin: bool, request: gr.Request):
        return write(reindex, is_admin=is_admin, request=request)

    text.submit(browse, [text, style, kind], [table, gallery, count], api_name="browse")
    for trigger in (style.submit, kind.change):
        trigger(browse, [text, style, kind], [table, gallery, count], api_visibility="private")
    import_button.click(import_clicked, [folder, uploads, admin], [status, table, gallery], api_visibility="private")
    remove_button.click(remove_clicked, [remove_id, admin], [status, table, gallery], api_visibility="private")
    reindex_button.click(reindex_clicked, [admin], [status, table, gallery], api_visibility="private")
    return browse, (text, style, kind), (table, gallery, count)
