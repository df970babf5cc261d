"""Where a listwise reranker's answers come from: a local transformers causal LM (greedy,
exactly as many new tokens as the full answer ``[1] > ... > [w]`` takes, as rank-llm asks
vLLM for), or any OpenAI-compatible chat endpoint (temperature 0) through the ``openai`` SDK.

Each backend says how it counts prompt tokens (to fit the window into ``context_size``),
how long an answer may be, and who it is (for the response cache key)."""

from __future__ import annotations

from statbench.api import StatbenchError, fingerprint, one_line
from statbench.models.api_rerankers.retry import Failure, with_retries
from statbench.models.listwise.prompt import answer_template, fix_text
from statbench.models.shared import hub

FLAG = "--reranker-param"


class LocalCausalLM:
    """A chat-tuned causal LM loaded with transformers (``model=HUB_ID_OR_PATH``)."""

    kind = "transformers"
    paid = False

    def __init__(self, name: str, device: str):
        self.name = name
        self._device = hub.device(device)
        self.tokenizer, model = hub.pretrained(name, "AutoModelForCausalLM", FLAG)
        if not getattr(self.tokenizer, "chat_template", None):
            raise StatbenchError(f"model {name}: its tokenizer has no chat template; a listwise reranker needs a "
                                 f"chat model (e.g. castorini/rank_zephyr_7b_v1_full)")
        self.model = model.to(self._device).eval()

    def identity(self) -> dict:
        return {"backend": self.kind, "model": fingerprint(self.name)}

    def render(self, messages: list[dict]) -> str:
        prompt = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return fix_text(prompt)

    def count_tokens(self, messages: list[dict]) -> int:
        return len(self.tokenizer.encode(self.render(messages)))

    def output_tokens(self, window: int) -> int:
        """rank-llm's ``num_output_tokens``: the tokens of the full answer, less one."""
        return max(1, len(self.tokenizer.encode(answer_template(window))) - 1)

    def generate(self, messages: list[dict], max_tokens: int) -> str:
        import torch

        encoded = self.tokenizer(self.render(messages), return_tensors="pt").to(self._device)
        encoded.pop("token_type_ids", None)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with torch.inference_mode():
            out = self.model.generate(**encoded, do_sample=False, min_new_tokens=max_tokens,
                                      max_new_tokens=max_tokens, pad_token_id=pad)
        return self.tokenizer.decode(out[0, encoded["input_ids"].shape[1]:], skip_special_tokens=True)


class OpenAIChat:
    """Any OpenAI-compatible ``/chat/completions`` endpoint (vLLM, TGI, OpenAI, ...)."""

    kind = "openai"
    paid = True

    def __init__(self, owner: str, base_url: str, model: str, key: str, timeout: float, max_retries: int,
                 stats: dict):
        try:
            import openai
        except ImportError:
            raise StatbenchError(f"{owner}: the OpenAI-compatible backend needs the openai SDK") from None
        self.owner, self.base_url, self.name = owner, base_url.rstrip("/"), model
        self.max_retries, self.stats = max_retries, stats
        self.client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=timeout, max_retries=0)
        #: prompt tokens the endpoint reported for the answers generated so far (``usage.prompt_tokens``)
        self.prompt_tokens = 0
        #: answers whose response reported no prompt tokens (the total is then unknown)
        self.unreported = 0

    def identity(self) -> dict:
        return {"backend": self.kind, "endpoint": self.base_url, "model": self.name}

    @staticmethod
    def count_tokens(messages: list[dict]) -> int:
        """An estimate (characters / 4 plus a few per message): the endpoint's tokenizer is unknown."""
        return sum(len(m["content"]) for m in messages) // 4 + 4 * len(messages)

    @staticmethod
    def output_tokens(window: int) -> int:
        return 4 * window + 8  # '[12] > ' is at most 4 tokens in the common tokenizers

    def generate(self, messages: list[dict], max_tokens: int) -> str:
        target = f"{self.base_url}/chat/completions"

        def call():
            return self.client.chat.completions.create(model=self.name, messages=messages, temperature=0,
                                                       max_tokens=max_tokens)

        try:
            response = with_retries(self.owner, target, call, _classify, self.max_retries, self.stats)
            text = response.choices[0].message.content
            self._count(getattr(getattr(response, "usage", None), "prompt_tokens", None))
        except StatbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - an answer the SDK could not read
            raise StatbenchError(f"{self.owner}: malformed response from {target}: {one_line(exc)}") from exc
        if not isinstance(text, str):
            raise StatbenchError(f"{self.owner}: malformed response from {target}: the answer has no text")
        return text


    def _count(self, tokens) -> None:
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
            self.prompt_tokens += tokens
        else:
            self.unreported += 1


def _classify(exc: BaseException) -> Failure | None:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return Failure(exc.status_code, dict(exc.response.headers), one_line(exc))
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return Failure(None, {}, one_line(exc))
    return None
