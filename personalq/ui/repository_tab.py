"""The Repository tab: browse, search, filter and sort checkpoints, each row with its thumbnail; send one to the
chat; a session that may write (see :mod:`personalq.access`) edits a checkpoint's card, imports files or a folder,
removes one, rebuilds the index.

"Use in chat" is wired in the page only: it puts a request naming the checkpoint into the chat's box
(``#chat-input``) and opens the Chat tab, so the chat tab needs no code for it and the person finishes the request.
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from personalq.access import TooManyAttempts, WriteAccess, WriteRefused
from personalq.config import Settings
from personalq.repository.errors import RepositoryUnavailable
from personalq.repository.overrides import CardEdit, InvalidEdit
from personalq.repository.service import ORDERS, CheckpointFilter, CheckpointNotFound, Repository
from personalq.ui.media import store_uploads
from personalq.ui.repository_table import (
    CHAT_COLUMN,
    COLUMN_WIDTHS,
    COLUMNS,
    DATATYPES,
    ID_COLUMN,
    chat_request,
    gallery,
    rows,
)
from personalq.ui.visitor import client_of, username_of
from personalq.web.upload_gate import SET_COOKIE_JS, UploadPasses

MAX_ROWS = 1000  # rows drawn at once; filters narrow a larger repository
SORTS = {"family and version": "family", "name": "name", "newest": "newest", "last used": "used", "base": "base"}
USE_IN_CHAT_JS = """(text) => {
  if (!text) return;
  const box = document.querySelector('#chat-input textarea');
  if (box) { box.value = text; box.dispatchEvent(new Event('input', {bubbles: true})); }
  const tab = [...document.querySelectorAll('button[role="tab"]')].find((b) => b.innerText.trim() === 'Chat');
  if (tab) tab.click();
  if (box) box.focus();
}"""
assert set(SORTS.values()) == set(ORDERS)


def _lines(text: str | None) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def _commas(text: str | None) -> list[str]:
    return [word.strip() for word in (text or "").split(",") if word.strip()]


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
    def browse(text: str, style: str, kind: str, base: str = "", sort: str = "family and version"):
        filters = CheckpointFilter(
            text=text or None,
            style=style or None,
            kind=kind or None,
            base_model=base or None,
            order=SORTS.get(sort or "", "family"),
            limit=MAX_ROWS + 1,
        )
        checkpoints = repository.list(filters)
        count = f"{len(checkpoints)} checkpoints"
        if len(checkpoints) > MAX_ROWS:
            checkpoints = checkpoints[:MAX_ROWS]
            count = f"the first {MAX_ROWS} of {repository.count(filters)} checkpoints: filter to see others"
        previews = settings.previews_dir
        return rows(checkpoints, previews), gallery(checkpoints, previews), count

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

    def save_edit(checkpoint_id, name, triggers, styles, subjects, tags, base, reset=False) -> str:
        if not checkpoint_id:
            return "Select a checkpoint in the table first."
        change = CardEdit(
            name=name if name and name.strip() else None,
            triggers=_lines(triggers),
            styles=_commas(styles),
            subjects=_commas(subjects),
            tags=_commas(tags),
            base_model=base or None,
            reset=reset,
        )
        try:
            card = repository.edit(checkpoint_id, CardEdit(reset=True) if reset else change)
        except (CheckpointNotFound, InvalidEdit) as exc:
            return str(exc)
        edited = ", ".join(card.edited) or "nothing: the card is as its files say"
        return f"Saved {card.id}. Edited: {edited}. Check-in uses it from the next request."

    with gr.Row():
        text = gr.Textbox(label="Search", placeholder="name, subject, tag...", scale=3)
        style = gr.Textbox(label="Style", placeholder="anime, sketch...", scale=1)
        kind = gr.Dropdown(
            ["", "lora", "dreambooth", "textual_inversion", "checkpoint"], value="", label="Kind", scale=1
        )
        base = gr.Dropdown(
            ["", *repository.bases()], value="", label="Base", scale=1, elem_id="repo-base", allow_custom_value=True
        )
        sort = gr.Dropdown(list(SORTS), value="family and version", label="Sort by", scale=1, elem_id="repo-sort")
    count = gr.Markdown()
    table = gr.Dataframe(
        headers=COLUMNS,
        datatype=DATATYPES,
        interactive=False,
        wrap=True,
        elem_id="repo-table",
        max_height=640,
        column_widths=COLUMN_WIDTHS,
    )
    with gr.Accordion("Larger previews", open=False):
        gallery_view = gr.Gallery(label="Previews", columns=8, height=260, elem_id="repo-gallery")
    chat_text = gr.Textbox(visible="hidden", elem_id="repo-chat-request")
    build_admin_sign_in(access, admin, passes)
    with gr.Accordion("Edit the selected checkpoint", open=False, elem_id="repo-edit"):
        selected = gr.Textbox(label="Checkpoint id (click a row)", interactive=False, elem_id="edit-id")
        with gr.Row():
            edit_name = gr.Textbox(label="Display name", elem_id="edit-name", scale=2)
            edit_base = gr.Textbox(label="Base (sd-1.5, sdxl, pony...)", elem_id="edit-base", scale=1)
        edit_triggers = gr.Textbox(
            label="Triggers, one per line (the first is the one prompts get)", lines=3, elem_id="edit-triggers"
        )
        with gr.Row():
            edit_styles = gr.Textbox(label="Styles (comma-separated)", elem_id="edit-styles")
            edit_subjects = gr.Textbox(label="Subjects (comma-separated)", elem_id="edit-subjects")
            edit_tags = gr.Textbox(label="Tags (comma-separated)", elem_id="edit-tags")
        with gr.Row():
            save_button = gr.Button("Save edits", variant="primary", elem_id="edit-save")
            reset_button = gr.Button("Back to what the files say", elem_id="edit-reset")
            chat_button = gr.Button("Use in chat", elem_id="edit-use-in-chat")
        edit_status = gr.Markdown(elem_id="edit-status")
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

    edit_fields = [edit_name, edit_triggers, edit_styles, edit_subjects, edit_tags, edit_base]

    def card_fields(checkpoint_id: str) -> list:
        try:
            card = repository.get(checkpoint_id)
        except CheckpointNotFound:
            return [""] * len(edit_fields)
        return [
            card.name,
            "\n".join(card.triggers),
            ", ".join(card.styles),
            ", ".join(card.subjects),
            ", ".join(card.tags),
            card.base_model,
        ]

    def row_selected(event: gr.SelectData):
        """A click on a row selects it for editing; a click on its "use in chat" cell also fills the chat's box."""
        values = event.row_value or []
        checkpoint_id = str(values[ID_COLUMN]) if len(values) > ID_COLUMN else ""
        use = bool(checkpoint_id) and (event.index or [None, None])[1] == CHAT_COLUMN
        return checkpoint_id, *card_fields(checkpoint_id), use_in_chat(checkpoint_id) if use else ""

    def use_in_chat(checkpoint_id: str) -> str:
        try:
            return chat_request(repository.get(checkpoint_id)) if checkpoint_id else ""
        except CheckpointNotFound:
            return ""

    def edit_clicked(
        checkpoint_id, name, triggers, styles, subjects, tags, base_, is_admin: bool, request: gr.Request
    ):
        fields = (name, triggers, styles, subjects, tags, base_)
        message, table_rows, pictures = write(save_edit, checkpoint_id, *fields, is_admin=is_admin, request=request)
        return message, table_rows, pictures, *card_fields(checkpoint_id)

    def reset_clicked(checkpoint_id: str, is_admin: bool, request: gr.Request):
        message, table_rows, pictures = write(
            save_edit, checkpoint_id, *[""] * 6, True, is_admin=is_admin, request=request
        )
        return message, table_rows, pictures, *card_fields(checkpoint_id)

    def import_clicked(folder_: str, files: list[str] | None, is_admin: bool, request: gr.Request):
        return write(import_, folder_, files, is_admin=is_admin, request=request)

    def remove_clicked(checkpoint_id: str, is_admin: bool, request: gr.Request):
        return write(remove, checkpoint_id, is_admin=is_admin, request=request)

    def reindex_clicked(is_admin: bool, request: gr.Request):
        return write(reindex, is_admin=is_admin, request=request)

    filters = [text, style, kind, base, sort]
    shown = [table, gallery_view, count]
    text.submit(browse, filters, shown, api_name="browse")
    for trigger in (style.submit, kind.change, base.change, sort.change):
        trigger(browse, filters, shown, api_visibility="private")
    table.select(row_selected, None, [selected, *edit_fields, chat_text], api_visibility="private").then(
        None, [chat_text], None, js=USE_IN_CHAT_JS
    )
    chat_button.click(use_in_chat, [selected], [chat_text], api_visibility="private").then(
        None, [chat_text], None, js=USE_IN_CHAT_JS
    )
    edited = [edit_status, table, gallery_view, *edit_fields]
    save_button.click(edit_clicked, [selected, *edit_fields, admin], edited, api_visibility="private")
    reset_button.click(reset_clicked, [selected, admin], edited, api_visibility="private")
    import_button.click(
        import_clicked, [folder, uploads, admin], [status, table, gallery_view], api_visibility="private"
    )
    remove_button.click(remove_clicked, [remove_id, admin], [status, table, gallery_view], api_visibility="private")
    reindex_button.click(reindex_clicked, [admin], [status, table, gallery_view], api_visibility="private")
    return browse, (text, style, kind, base, sort), (table, gallery_view, count)
