"""One settings object for the whole program, read once at start-up and then passed down explicitly.

Values come from keyword overrides (the command line), then ``PERSONALQ_*`` environment variables, then
defaults. Nothing else in the package reads the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ASSETS = PROJECT_ROOT / "assets"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PERSONALQ_", env_nested_delimiter="__", extra="ignore")

    home: Path = Field(default=Path("db"), description="folder holding the SQLite file, the Chroma index and caches")
    database_url: str | None = Field(default=None, description="any SQLAlchemy URL; default: SQLite file in home")
    device: Literal["auto", "cpu", "cuda"] = "auto"
    llm_backend: Literal["local", "gemini", "openai"] = "local"
    llm_model: str = "gemini-2.5-flash"
    llm_api_key: str | None = None
    llm_base_url: str | None = Field(default=None, description="endpoint override (a local server, a proxy)")
    llm_timeout_s: float = 20.0
    memory_budget_mb: int = 2048
    assets_dir: Path = DEFAULT_ASSETS
    model_cache: Path = Field(default_factory=lambda: Path.home() / ".cache" / "personalq",
                              description="per-user files derived from packaged models (the ONNX query encoder)")
    rater_tokens: dict[str, str] = Field(default_factory=dict, description="rater sign-in: token -> rater name")
    admin_token: str | None = Field(default=None, description="token that opens the preference results")
    zero_gpu: bool = Field(default=False, validation_alias=AliasChoices("PERSONALQ_ZERO_GPU", "SPACES_ZERO_GPU"),
                           description="running on a ZeroGPU Space: generation is wrapped in spaces.GPU")
    base_models: dict[str, str] = Field(
        default_factory=dict,
        description="card base_model name -> local folder or Hub id; the bundled demo base is the fallback",
    )

    @property
    def sqlite_path(self) -> Path:
        return self.home / "personalq.sqlite"

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.sqlite_path}"

    @property
    def chroma_dir(self) -> Path:
        return self.home / "chroma"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    def resolved_device(self) -> str:
        if self.device != "auto":
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def prepare(self) -> "Settings":
        """Create the home folder; returns self so start-up can chain it."""
        self.home.mkdir(parents=True, exist_ok=True)
        return self


def load_settings(**overrides: object) -> Settings:
    """Build the settings once; ``None`` overrides are ignored so CLI options left unset fall through."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None}).prepare()
