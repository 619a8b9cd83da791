#!/usr/bin/env python3
"""Token-embeddings sidecar for ideaflow's `transformers` provider kind.

Serves the contextual token embeddings of any hidden layer of one Hugging
Face model, tokenized as bert_score tokenizes, so that ideaflow computes
BERTScore as bert_score does (its default layer per model: 40 of 48 for
microsoft/deberta-xlarge-mnli, the IdeaBench authors' model). Text
Embeddings Inference (the `tei` kind) serves the final layer only.

    pip install torch transformers
    python tools/token_embeddings_server.py --model microsoft/deberta-xlarge-mnli --port 8090

and in the experiment:

    provider "bert" {
      kind     = "transformers"
      base_url = "http://localhost:8090"
    }
    model "bert" {
      provider = provider.bert
      name     = "microsoft/deberta-xlarge-mnli"
    }

HTTP contract (the Go client, stages/llm/transformers.go, and its test fake,
stages/llm/llmtest/transformers.go, hold to it):

    POST /token_embeddings
    request:  {"model": "microsoft/deberta-xlarge-mnli",
               "inputs": ["text", ...],
               "layer": 40}                  # optional; omitted: the last layer
    reply:    {"model": "microsoft/deberta-xlarge-mnli", "layer": 40,
               "inputs": [{"tokens":  ["[CLS]", "tau", ..., "[SEP]"],
                           "special": [true, false, ..., true],
                           "vectors": [[float, ...], ...]}, ...]}

    One entry per input, in order; per entry one token, flag and vector per
    token the model saw, special tokens included. "special" marks the
    tokenizer's [CLS] and [SEP] (RoBERTa's <s> and </s>): the two tokens
    bert_score weighs 0 while they stay in its similarity matrix. Layer L is
    hidden_states[L]: 0 the embedding output, L the output of the L-th
    transformer layer, the model's number of layers its last. For encoders
    with nothing after their last layer (BERT, RoBERTa, DeBERTa) this is the
    tensor bert_score takes from the model cut after L layers.

    Errors are {"error": "message"}: 400 for a body it cannot serve (not
    JSON, no inputs, another model than the one it runs, a layer out of
    range), 413 for more inputs than --max-batch (the client halves its
    batches), 500 for a failure of the model.

Tokenization follows bert_score 0.3.13's sent_encode: the text is stripped;
an empty text is only the special tokens; special tokens are added, inputs
truncated at the tokenizer's model_max_length, and GPT-2 and RoBERTa
tokenizers get add_prefix_space. The tokenizer is the slow one
(use_fast=False), bert_score's default.

Listens on 127.0.0.1 unless told otherwise; it has no authentication.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
from transformers import AutoModel, AutoTokenizer, GPT2Tokenizer, RobertaTokenizer


class Embedder:
    def __init__(self, name, device):
        self.name = name
        self.device = device
        self.tokenizer = AutoTokenizer.from_pretrained(name, use_fast=False)
        model = AutoModel.from_pretrained(name)
        # Encoder-decoder models: bert_score embeds with the encoder.
        if hasattr(model, "encoder") and hasattr(model, "decoder"):
            model = model.encoder
        model.eval()
        self.model = model.to(device)
        self.num_layers = model.config.num_hidden_layers
        self.special_ids = {i for i in (self.tokenizer.cls_token_id, self.tokenizer.sep_token_id) if i is not None}
        self.lock = threading.Lock()  # one forward pass at a time

    def encode(self, text):
        text = text.strip()
        tok = self.tokenizer
        if text == "":
            return tok.build_inputs_with_special_tokens([])
        kwargs = dict(add_special_tokens=True, max_length=tok.model_max_length, truncation=True)
        if isinstance(tok, (GPT2Tokenizer, RobertaTokenizer)):
            kwargs["add_prefix_space"] = True
        return tok.encode(text, **kwargs)

    def embed(self, inputs, layer):
        ids = [self.encode(t) for t in inputs]
        longest = max(len(x) for x in ids)
        pad = self.tokenizer.pad_token_id or 0
        batch = torch.full((len(ids), longest), pad, dtype=torch.long)
        mask = torch.zeros((len(ids), longest), dtype=torch.long)
        for i, x in enumerate(ids):
            batch[i, : len(x)] = torch.tensor(x, dtype=torch.long)
            mask[i, : len(x)] = 1
        with self.lock, torch.no_grad():
            out = self.model(batch.to(self.device), attention_mask=mask.to(self.device), output_hidden_states=True)
        hidden = out.hidden_states[layer].float().cpu()
        entries = []
        for i, x in enumerate(ids):
            entries.append({
                "tokens": self.tokenizer.convert_ids_to_tokens(x),
                "special": [t in self.special_ids for t in x],
                "vectors": hidden[i, : len(x)].tolist(),
            })
        return entries


class Handler(BaseHTTPRequestHandler):
    embedder = None
    max_batch = 8

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        if self.path != "/token_embeddings":
            return self.reply(404, {"error": "no route POST " + self.path})
        e = self.embedder
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError as err:
            return self.reply(400, {"error": "the body is not JSON: %s" % err})
        inputs, layer = req.get("inputs"), req.get("layer")
        if layer is None:
            layer = e.num_layers
        if req.get("model") != e.name:
            return self.reply(400, {"error": "this server runs %s, not %s" % (e.name, req.get("model"))})
        if not isinstance(inputs, list) or not inputs or not all(isinstance(t, str) for t in inputs):
            return self.reply(400, {"error": "inputs must be a non-empty list of texts"})
        if not isinstance(layer, int) or isinstance(layer, bool) or not 0 <= layer <= e.num_layers:
            return self.reply(400, {"error": "layer %r is out of range: %s has %d layers (0 is the embedding output, %d the last)"
                                    % (layer, e.name, e.num_layers, e.num_layers)})
        if len(inputs) > self.max_batch:
            return self.reply(413, {"error": "%d inputs, more than --max-batch %d" % (len(inputs), self.max_batch)})
        try:
            entries = e.embed(inputs, layer)
        except Exception as err:  # the model failed: the client may retry
            return self.reply(500, {"error": "%s: %s" % (type(err).__name__, err)})
        self.reply(200, {"model": e.name, "layer": layer, "inputs": entries})

    def log_message(self, fmt, *args):
        sys.stderr.write("token_embeddings_server: " + (fmt % args) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a Hugging Face model name, e.g. microsoft/deberta-xlarge-mnli")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8090)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--max-batch", type=int, default=8, help="most inputs per request (more: 413)")
    args = ap.parse_args()
    Handler.embedder = Embedder(args.model, args.device)
    Handler.max_batch = args.max_batch
    srv = ThreadingHTTPServer((args.host, args.port), Handler)
    print("serving %s (%d layers) on http://%s:%d/token_embeddings" % (args.model, Handler.embedder.num_layers, args.host, args.port), file=sys.stderr)
    srv.serve_forever()


if __name__ == "__main__":
    main()
