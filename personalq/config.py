"""One settings object for the whole program, read once at start-up and then passed down explicitly.

Values come from keyword overrides (the command line), then ``PERSONALQ_*`` environment variables, then
defaults. Nothing else in the package reads the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

Precision = Literal["FP32", "W8A8", "W4A8", "W8A4", "W4A4"]  # the app's menu: personalq.serving.variants.PRECISIONS
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ASSETS = PROJECT_ROOT / "assets"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PERSONALQ_", env_nested_delimiter="__", extra="ignore")

    home: Path = Field(default=Path("db"), description="folder holding the SQLite file, the Chroma index and caches")
    database_url: str | None = Field(default=None, description="any SQLAlchemy URL; default: SQLite file in home")
    chroma_url: str | None = Field(
        default=None,
        description="a Chroma server (`chroma run`), e.g. http://localhost:8000, "
        "shared by every process; default: an index folder in home",
    )
    chroma_collection: str = Field(
        default="checkpoints",
        min_length=3,
        description="the collection to use, so several homes can share one Chroma server",
    )
    device: Literal["auto", "cpu", "cuda"] = "auto"
    llm_backend: Literal["local", "gemini", "openai"] = "local"
    llm_model: str = "gemini-2.5-flash"
    llm_api_key: SecretStr | None = Field(default=None, description="the LLM backend's key; never logged or shown")
    llm_base_url: str | None = Field(default=None, description="endpoint override (a local server, a proxy)")
    llm_timeout_s: float = 20.0
    memory_budget_mb: int = 2048
    gpu_dtype: Literal["auto", "float16", "bfloat16"] = Field(
        default="auto",
        description="the float type of bases on CUDA; auto: bfloat16 where the GPU supports it, else float16 "
        "(the CPU: PERSONALQ_CPU_DTYPE)",
    )
    cpu_dtype: Literal["auto", "float32", "bfloat16"] = Field(
        default="auto",
        description="the float type of bases on the CPU; auto: bfloat16 on a processor with bfloat16 units "
        "(AVX512-BF16, AMX) for bases as wide as SD 1.5 and wider, float32 otherwise (the demo zoo's UNet is too "
        "narrow to gain from it)",
    )
    calibration_size: int = Field(
        default=256,
        ge=64,
        multiple_of=8,
        description="largest image side calibration generates at before quantizing; a base whose native size "
        "is smaller calibrates at its own",
    )
    kernels: Literal["auto", "integer", "dequantize"] = Field(
        default="auto",
        description="how quantized layers compute: auto (the faster measured path: int8 products on a CPU with "
        "VNNI or AMX units that pass a self-check at start-up, a float weight per call on CUDA and elsewhere), "
        "integer (int8 products wherever they run, CUDA's Linear layers too) or dequantize (always a float weight "
        "per call)",
    )
    default_precision: Precision = Field(default="FP32", description="the chat's precision when it opens")
    preview_interval_s: float = Field(
        default=0.25,
        ge=0,
        description="generation streams a preview of the first denoising step, then one whenever this many seconds "
        "have passed since the last (0: every step); the other steps report progress only",
    )
    warmup_checkpoints: int = Field(
        default=2,
        ge=0,
        description="at start-up, the warm-up precisions of this many most recently used checkpoints are prepared "
        "(quantized and stored if new, loaded either way) in the background",
    )
    warmup_precisions: list[Precision] = Field(
        default_factory=lambda: ["W8A8"], description="the precisions prepared at start-up (besides the default)"
    )
    ray_min_replicas: int = Field(default=2, ge=1, description="Ray Serve (personalq serve --ray): fewest replicas")
    ray_max_replicas: int = Field(
        default=2, ge=1, description="Ray Serve: most replicas (autoscaling between the two when they differ)"
    )
    ray_target_ongoing_requests: float = Field(
        default=2.0, gt=0, description="Ray Serve autoscaling: requests per replica it scales towards"
    )
    ray_max_ongoing_requests: int = Field(default=4, ge=1, description="Ray Serve: requests one replica takes at once")
    ray_models_per_replica: int = Field(
        default=4, ge=1, description="Ray Serve multiplexing: variants one replica holds before unloading the LRU one"
    )
    ray_replica_cpus: float = Field(default=1.0, gt=0, description="Ray Serve: CPUs reserved by each replica")
    ray_replica_gpus: float = Field(
        default=0.0, ge=0, description="Ray Serve: GPUs reserved by each replica (1: one replica per GPU)"
    )
    ray_max_batch_size: int = Field(
        default=1,
        ge=1,
        description="Ray Serve: requests for the same variant and size run as one pipeline call of up to this many "
        "images (activation memory grows with it; 1: no batching)",
    )
    ray_batch_wait_s: float = Field(
        default=0.05, ge=0, description="Ray Serve batching: how long a replica waits for a batch to fill"
    )
    assets_dir: Path = DEFAULT_ASSETS
    model_cache: Path = Field(
        default_factory=lambda: Path.home() / ".cache" / "personalq",
        description="per-user files derived from packaged models (the ONNX query encoder)",
    )
    rater_tokens: dict[str, str] = Field(default_factory=dict, description="rater sign-in: token -> rater name")
    admin_token: SecretStr | None = Field(
        default=None,
        description="token that opens the preference results and the web app's writes (import, remove, "
        "reindex, memory budget)",
    )
    auth: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="Gradio sign-in for the whole web app: user -> password; signed-in users may write",
    )
    queue_size: int = Field(
        default=64, ge=1, description="requests waiting in the web app's queue before it says busy"
    )
    max_upload_mb: int = Field(
        default=2048, ge=1, description="largest file the web app accepts as an upload (only sessions that may write)"
    )
    max_request_kb: int = Field(
        default=1024,
        ge=16,
        description="largest request body the web app reads, uploads aside (a chat sends its history every message)",
    )
    max_history_messages: int = Field(
        default=200, ge=2, description="chat messages a client may send back as its history; older ones are dropped"
    )
    max_pending_per_visitor: int = Field(
        default=2,
        ge=1,
        description="generations one visitor (browser session; and address, behind a trusted proxy) may have "
        "waiting or running; more are refused at once",
    )
    anonymous_max_steps: int = Field(
        default=20,
        ge=1,
        description="a visitor who may not write draws at most this many steps at the base's native size per "
        "image (steps x pixels: fewer steps buy a larger image)",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="addresses of proxies whose X-Forwarded-For names the visitor; none by default, so the address "
        "a connection comes from is the visitor's",
    )
    retention_hours: float = Field(
        default=72.0, gt=0, description="generated images and chat sessions older than this are deleted"
    )
    zero_gpu: bool = Field(
        default=False,
        validation_alias=AliasChoices("PERSONALQ_ZERO_GPU", "SPACES_ZERO_GPU"),
        description="running on a ZeroGPU Space: generation is wrapped in spaces.GPU",
    )
    base_models: dict[str, str] = Field(
        default_factory=dict,
        description="card base_model name -> local folder or Hub id; the bundled demo base is the fallback",
    )
    reranker_model: Path | None = Field(
        default=None,
        description="folder of a sentence-transformers cross-encoder: "
        "adds the reranker baseline (rater tab, Check-in bench); none is downloaded",
    )

    @property
    def sqlite_path(self) -> Path:
        return self.home / "personalq.sqlite"

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.sqlite_path}"

    @property
    def outputs_dir(self) -> Path:
        """Generated images, one folder per chat session; served by the web app."""
        return self.home / "outputs"

    @property
    def previews_dir(self) -> Path:
        """Copies of the cards' preview images, so the web app serves only from the home."""
        return self.home / "previews"

    @property
    def rating_dir(self) -> Path:
        """The rater's pair images; served by the web app."""
        return self.home / "rating"

    @property
    def exports_dir(self) -> Path:
        """Private files waiting for their one-time download (the votes export); never served."""
        return self.home / "exports"

    @property
    def uploads_dir(self) -> Path:
        """Files uploaded through the web app, one folder per upload, kept because the repository points at them."""
        return self.home / "uploads"

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
