"""The Rater tab: sign in with a token, judge blind pairs, see the method names only after voting.

Which method produced which side is held by the rating service under the pair's ticket; the session keeps
only that ticket, so the page never carries the names before the vote and a vote cannot say which side was
which. The admin token opens the results and the CSV export, handed over as a one-time download.
"""

from __future__ import annotations

import gradio as gr

from personalq.access import TooManyAttempts
from personalq.conversation import plain
from personalq.rating.pairs import Pair
from personalq.rating.service import PairClosed, Rater, RatingService, SignInError
from personalq.rating.votes import AlreadyVoted
from personalq.repository.errors import RepositoryUnavailable
from personalq.ui.visitor import client_of
from personalq.web.downloads import EXPIRES_S, OneTimeDownloads

VOTES = {
    "vote-left": ("Left is better", "left"),
    "vote-right": ("Right is better", "right"),
    "vote-tie": ("Tie", "tie"),
    "vote-both-bad": ("Both bad", "both_bad"),
}


def _buttons(enabled: bool) -> list:
    return [gr.update(interactive=enabled)] * len(VOTES)


def request_line(pair: Pair) -> str:
    """The request as inert text: items are written from card names, which an imported card chooses."""
    return f"**Request:** {plain(pair.item.request)}"


def reveal_line(pair: Pair, choice: str) -> str:
    """Which method drew which side, after the vote; the labels carry card names, so they are inert text too."""
    return (
        f"Left was **{plain(pair.left.label)}** · right was **{plain(pair.right.label)}** · "
        f"you chose {choice.replace('_', ' ')}."
    )


def build_rater_tab(service: RatingService, downloads: OneTimeDownloads) -> None:
    def show(rater: Rater) -> tuple:
        """(ticket, status, request, left image, right image, reveal, *vote buttons)"""
        pair = service.next_pair(rater)
        done, total = service.progress(rater)
        if pair is None:
            return (
                None,
                f"Signed in as **{rater.name}** · all {total} pairs rated, thank you.",
                "",
                None,
                None,
                "",
                *_buttons(False),
            )
        return (
            pair.ticket,
            f"Signed in as **{rater.name}** · pair {done + 1} of {total}",
            request_line(pair),
            pair.left.image_path,
            pair.right.image_path,
            "",
            *_buttons(True),
        )

    def sign_in(token: str, request: gr.Request):
        try:
            rater = service.sign_in(token, client_of(request))
        except (SignInError, TooManyAttempts) as error:
            return (
                None,
                None,
                f"Sign-in failed: {error}",
                "",
                None,
                None,
                "",
                *_buttons(False),
                gr.update(visible=False),
                "",
            )
        results = service.results(rater) if rater.admin else ""
        return (rater, *show(rater), gr.update(visible=rater.admin), results)

    def vote(choice: str, rater: Rater | None, ticket: str | None):
        if rater is None or ticket is None:
            return ("Sign in first.", *_buttons(False))
        try:
            pair = service.vote(rater, ticket, choice)
        except (AlreadyVoted, PairClosed, RepositoryUnavailable) as error:
            return (str(error), *_buttons(False))
        return (reveal_line(pair, choice), *_buttons(False))

    rater_state, ticket_state = gr.State(None), gr.State(None)
    with gr.Column(elem_id="rater-panel"):
        with gr.Row():
            token = gr.Textbox(label="Rater token", type="password", elem_id="rater-token", scale=3)
            sign_in_button = gr.Button("Sign in", elem_id="rater-sign-in", scale=1)
        status = gr.Markdown(elem_id="rater-status")
        request = gr.Markdown(elem_id="rater-prompt")
        with gr.Row():
            left = gr.Image(label="Left", elem_id="left-image", interactive=False, height=280)
            right = gr.Image(label="Right", elem_id="right-image", interactive=False, height=280)
        with gr.Row():
            buttons = [gr.Button(label, elem_id=elem, interactive=False) for elem, (label, _) in VOTES.items()]
        reveal = gr.Markdown(elem_id="reveal")
        next_button = gr.Button("Next pair", elem_id="rater-next")
        with gr.Group(visible=False) as admin:
            gr.Markdown("### Results (admin)")
            results = gr.Markdown(elem_id="results")
            export = gr.Button("Export votes as CSV", elem_id="export-csv")
            csv_link = gr.Markdown(elem_id="export-link")
            new_round = gr.Button("Start a new rating round (items drawn afresh from the repository)")

    shown = [ticket_state, status, request, left, right, reveal, *buttons]
    # named endpoints: a rater (or the load benchmark) can work through the API; the session keeps who signed in
    sign_in_button.click(sign_in, token, [rater_state, *shown, admin, results], api_name="rater_sign_in")
    for button, (_, choice) in zip(buttons, VOTES.values()):
        button.click(
            lambda r, t, choice=choice: vote(choice, r, t),
            [rater_state, ticket_state],
            [reveal, *buttons],
            api_name=f"rater_vote_{choice}",
        )
    next_button.click(
        lambda r: show(r) if r else (None, "Sign in first.", "", None, None, "", *_buttons(False)),
        rater_state,
        shown,
        api_name="rater_next",
    )

    def export_votes(rater: Rater | None) -> str:
        if rater is None or not rater.admin:
            return ""
        link = downloads.offer(service.export_csv(rater), "preference-votes.csv")
        return f"[Download the votes CSV]({link.lstrip('/')}) (the link works once, for {EXPIRES_S / 60:.0f} minutes)"

    export.click(export_votes, rater_state, csv_link, api_name="rater_export", api_visibility="undocumented")

    def start_round(rater: Rater | None) -> str:
        if rater is None or not rater.admin:
            return ""
        return f"Started. {service.new_round(rater).line()}; raters see its items from their next pair."

    new_round.click(start_round, rater_state, results, api_visibility="private")
