#!/usr/bin/env python3
"""Generates the extraction evaluation set: synthetic dialogues in English, German, French,
Spanish and Czech as a ChatGPT export (``conversations.json``), with the memories each user turn
should yield (``gold.json``: conversation, message, language, type, value).

The user turns mix self-statements of every memory type (several phrasings and values each,
negated and past forms among them) with turns that must yield nothing: greetings, questions,
small talk, hypotheticals, requests to write something, what others said, pasted code. Written
by the project (no real conversations); deterministic for a seed.

Usage: python3 benches/gen_dialogues.py --out /tmp/memport-eval [--conversations 300] [--seed 1]
"""

import argparse
import json
import os
import random

# (type, value, phrasings) per language; each phrasing has {v} for the value.
STATEMENTS = {
    "en": [
        ("identity", ["Leeds", "Toronto", "Austin", "Glasgow"], ["I live in {v}.", "I'm based in {v} these days.", "I am living in {v}, it's lovely."]),
        ("identity", ["a nurse", "a teacher", "a software engineer", "an accountant"], ["I'm {v}.", "I work as {v}.", "I am {v} at a small clinic."]),
        ("identity", ["Ema", "Tomas", "Priya"], ["My name is {v}.", "Please call me {v}."]),
        ("identity", ["Spanish", "Portuguese", "Mandarin"], ["I speak {v} at home.", "I speak {v} fluently."]),
        ("preference", ["metric units", "short answers", "dark mode"], ["I prefer {v}.", "I'd prefer {v}, please."]),
        ("preference", ["meat", "dairy"], ["I don't eat {v}.", "I never eat {v}."]),
        ("preference", ["jazz", "hiking", "spicy food"], ["I love {v}.", "I really enjoy {v}."]),
        ("preference", ["coffee", "podcasts"], ["I don't like {v}.", "I hate {v}."]),
        ("relationship", ["Ema", "Jonas", "Mila"], ["My daughter {v} is 7.", "My son {v} starts school soon.", "My wife {v} is a doctor."]),
        ("relationship", ["Rex", "Luna"], ["My dog {v} needs a walk.", "My cat {v} sleeps all day."]),
        ("goal", ["run a marathon", "learn Japanese", "switch careers"], ["I'm planning to {v} next year.", "My goal is to {v}.", "I want to {v}."]),
        ("goal", ["German", "the piano", "Rust"], ["I'm learning {v}.", "I am currently learning {v}."]),
        ("decision", ["use Postgres", "move the app to Kubernetes"], ["We decided to {v}.", "I've decided to {v}."]),
        ("decision", ["Svelte", "the blue logo"], ["We'll go with {v}.", "We went with {v} in the end."]),
        ("procedure", ["answer in bullet points", "cite your sources"], ["Always {v}.", "From now on, {v}."]),
        ("procedure", ["npm", "jQuery"], ["Never suggest {v}, we use something else."]),
        ("pitfall", ["Webpack", "The old installer"], ["{v} didn't work for us.", "{v} does not work on my machine."]),
        ("skill", ["Python", "French", "SQL"], ["I'm fluent in {v}.", "I'm good at {v}.", "I'm experienced with {v}."]),
        ("environment", ["Arch Linux", "macOS", "Neovim"], ["I use {v} every day.", "I'm using {v} on my laptop."]),
        ("project", ["a budgeting app", "a birdwatching blog"], ["I'm building {v} for my family.", "I'm working on {v}."]),
        ("fact", ["peanuts", "penicillin"], ["I'm allergic to {v}.", "I am allergic to {v}, so be careful."]),
        ("fact", ["Lyon", "Krakow"], ["I used to live in {v}.", "I was born in {v}."]),
    ],
    "de": [
        ("identity", ["Berlin", "Hamburg", "Graz"], ["Ich wohne in {v}.", "Ich lebe in {v}."]),
        ("identity", ["Krankenschwester", "Lehrerin", "Entwickler"], ["Ich arbeite als {v}.", "Ich bin {v}."]),
        ("identity", ["Lena", "Jonas"], ["Ich heiße {v}.", "Mein Name ist {v}."]),
        ("preference", ["kurze Antworten", "metrische Einheiten"], ["Ich bevorzuge {v}."]),
        ("preference", ["Fleisch", "Alkohol"], ["Ich esse kein {v}.", "Ich trinke keinen {v}."]),
        ("preference", ["Jazz", "Wandern"], ["Ich liebe {v}.", "Ich mag {v}."]),
        ("relationship", ["Mia", "Paul"], ["Meine Tochter heißt {v}.", "Mein Sohn {v} ist fünf."]),
        ("goal", ["Spanisch", "Gitarre"], ["Ich lerne {v}.", "Ich lerne gerade {v}."]),
        ("decision", ["Postgres zu nutzen", "das Projekt zu verschieben"], ["Wir haben uns entschieden, {v}."]),
        ("procedure", ["auf Deutsch antworten", "Quellen angeben"], ["Immer {v}.", "Ab jetzt {v}."]),
        ("fact", ["Nüsse", "Pollen"], ["Ich bin allergisch gegen {v}."]),
        ("environment", ["Linux", "VS Code"], ["Ich nutze {v}.", "Wir verwenden {v}."]),
    ],
    "fr": [
        ("identity", ["Lyon", "Nantes", "Bruxelles"], ["J'habite à {v}.", "Je vis à {v}."]),
        ("identity", ["infirmière", "développeur", "enseignante"], ["Je suis {v}.", "Je travaille comme {v}."]),
        ("identity", ["Camille", "Hugo"], ["Je m'appelle {v}.", "Mon nom est {v}."]),
        ("preference", ["les réponses courtes", "le thé"], ["Je préfère {v}.", "J'adore {v}."]),
        ("preference", ["viande", "lait"], ["Je ne mange pas de {v}.", "Je ne bois jamais de {v}."]),
        ("relationship", ["Emma", "Louis"], ["Ma fille s'appelle {v}.", "Mon fils {v} a six ans."]),
        ("goal", ["l'espagnol", "la guitare"], ["J'apprends {v}."]),
        ("decision", ["garder Postgres", "changer de banque"], ["Nous avons décidé de {v}.", "J'ai décidé de {v}."]),
        ("procedure", ["répondre en français", "citer tes sources"], ["Toujours {v}.", "Désormais, {v}."]),
        ("fact", ["arachides", "pollen"], ["Je suis allergique aux {v}."]),
        ("environment", ["Linux", "Firefox"], ["J'utilise {v}.", "Nous utilisons {v}."]),
    ],
    "es": [
        ("identity", ["Madrid", "Sevilla", "Lima"], ["Vivo en {v}.", "Vivo ahora en {v}."]),
        ("identity", ["enfermera", "profesor", "ingeniera"], ["Soy {v}.", "Trabajo como {v}."]),
        ("identity", ["Lucía", "Mateo"], ["Me llamo {v}.", "Mi nombre es {v}."]),
        ("preference", ["respuestas cortas", "el café"], ["Prefiero {v}.", "Me encanta {v}."]),
        ("preference", ["carne", "leche"], ["No como {v}.", "No bebo {v}."]),
        ("relationship", ["Sofía", "Diego"], ["Mi hija se llama {v}.", "Mi hijo {v} tiene cinco años."]),
        ("goal", ["alemán", "a programar"], ["Estoy aprendiendo {v}."]),
        ("decision", ["usar Postgres", "mudarnos"], ["Hemos decidido {v}.", "Decidimos {v}."]),
        ("procedure", ["responder en español", "citar tus fuentes"], ["Siempre {v}.", "De ahora en adelante, {v}."]),
        ("fact", ["los cacahuetes", "la penicilina"], ["Soy alérgica a {v}.", "Soy alérgico a {v}."]),
        ("environment", ["Linux", "Windows"], ["Uso {v}.", "Usamos {v} en el trabajo."]),
    ],
    "cs": [
        ("identity", ["Brně", "Praze", "Ostravě"], ["Bydlím v {v}.", "Momentálně bydlím v {v}."]),
        ("identity", ["zdravotní sestra", "učitelka", "programátor"], ["Jsem {v}.", "Pracuji jako {v}."]),
        ("identity", ["Ema", "Jakub"], ["Jmenuji se {v}."]),
        ("preference", ["krátké odpovědi", "čaj"], ["Preferuji {v}.", "Mám ráda {v}."]),
        ("preference", ["maso", "mléko"], ["Nejím {v}.", "Nepiju {v}."]),
        ("relationship", ["Ema", "Tomáš"], ["Moje dcera se jmenuje {v}.", "Můj syn {v} chodí do školy."]),
        ("goal", ["španělsky", "na kytaru"], ["Učím se {v}."]),
        ("decision", ["použít Postgres", "přestěhovat se"], ["Rozhodli jsme se {v}.", "Rozhodla jsem se {v}."]),
        ("procedure", ["odpovídat česky", "uvádět zdroje"], ["Vždy {v}.", "Od teď {v}."]),
        ("fact", ["ořechy", "pyl"], ["Jsem alergická na {v}.", "Jsem alergický na {v}."]),
        ("environment", ["Linux", "Vim"], ["Používám {v}.", "Používáme {v}."]),
    ],
}

# Everyday phrasings of the same facts, with the informality of real chats (lower case, no
# apostrophes, fillers, a fact at the end of a longer message): what the rules must generalize to.
VARIED = {
    "en": [
        ("identity", ["Leeds", "Toronto"], ["btw im based in {v}", "ok so I live in {v} and it rains a lot", "Quick context: I currently live in {v}."]),
        ("identity", ["a nurse", "a teacher"], ["fwiw i'm {v} so keep it practical", "I've been working as {v} for ten years."]),
        ("preference", ["tea", "short emails"], ["honestly I much prefer {v}", "I really like {v} tbh"]),
        ("preference", ["pork", "sugar"], ["just so you know, I do not eat {v}"]),
        ("relationship", ["Ema", "Noah"], ["my daughter {v} loves dinosaurs", "My husband, {v}, cooks on Sundays."]),
        ("goal", ["learn Spanish", "run a half marathon"], ["this year I want to {v}", "I'm hoping to {v} by June."]),
        ("decision", ["use SQLite", "drop the mobile app"], ["after a long debate we decided to {v}"]),
        ("procedure", ["use British spelling", "keep answers short"], ["please always {v}", "from now on {v}"]),
        ("environment", ["Ubuntu", "Windows"], ["fyi I'm on {v}", "I use {v} at work and at home"]),
    ],
    "de": [
        ("identity", ["Köln", "Wien"], ["übrigens wohne ich in {v}", "Kurz zu mir: ich wohne in {v}."]),
        ("preference", ["Tee", "kurze Mails"], ["ich mag {v} sehr"]),
    ],
    "fr": [
        ("identity", ["Lille", "Genève"], ["pour info j'habite à {v}", "Alors voilà, je vis à {v} depuis deux ans."]),
        ("preference", ["le café noir", "les réponses simples"], ["perso je préfère {v}"]),
    ],
    "es": [
        ("identity", ["Valencia", "Quito"], ["por cierto vivo en {v}", "Bueno, yo vivo en {v} desde hace años."]),
        ("preference", ["el té", "las respuestas cortas"], ["la verdad prefiero {v}"]),
    ],
    "cs": [
        ("identity", ["Plzni", "Olomouci"], ["jinak bydlím v {v}", "Pro kontext: bydlím v {v}."]),
        ("preference", ["čaj", "krátké odpovědi"], ["osobně preferuji {v}"]),
    ],
}

# Turns that must yield nothing.
NEGATIVES = {
    "en": [
        "Hi there!", "Thanks, that helps a lot.", "Can you explain how DNS works?", "What is the capital of Peru?",
        "If I lived in Paris, where would I shop?", "Write a cover letter saying I am a nurse in Leeds.",
        "My friend says that I am a great cook.", "Do I need a visa to live in Canada?",
        "```\nlet home = \"Leeds\"; // I live in Leeds\n```", "> I work as a pilot\nWhat does this line mean?",
        "Imagine I am a pirate captain.", "ok", "Could you make it shorter?", "Why is the sky blue?",
    ],
    "de": ["Hallo!", "Danke schön.", "Wie funktioniert DNS?", "Wenn ich in Paris wohnen würde, was würde ich essen?", "Schreib eine E-Mail, dass ich krank bin.", "Was ist die Hauptstadt von Peru?"],
    "fr": ["Bonjour !", "Merci beaucoup.", "Comment fonctionne le DNS ?", "Si je vivais à Paris, que mangerais-je ?", "Écris une lettre disant que je suis malade.", "Quelle est la capitale du Pérou ?"],
    "es": ["¡Hola!", "Muchas gracias.", "¿Cómo funciona el DNS?", "Si yo viviera en París, ¿qué comería?", "Escribe un correo diciendo que estoy enfermo.", "¿Cuál es la capital de Perú?"],
    "cs": ["Ahoj!", "Děkuji moc.", "Jak funguje DNS?", "Kdybych bydlel v Paříži, co bych jedl?", "Napiš e-mail, že jsem nemocný.", "Jaké je hlavní město Peru?"],
}

ASSISTANT = {"en": "Got it.", "de": "Verstanden.", "fr": "Compris.", "es": "Entendido.", "cs": "Rozumím."}


def node(node_id, parent, role, text, time):
    return {
        "id": node_id,
        "parent": parent,
        "children": [],
        "message": {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": time,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "metadata": {},
            "recipient": "all",
        },
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder (conversations.json, gold.json)")
    ap.add_argument("--conversations", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--varied", action="store_true", help="use the everyday phrasings (VARIED) instead of the plain ones")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    conversations, gold = [], []
    languages = sorted(STATEMENTS)
    time = 1_700_000_000.0
    for number in range(args.conversations):
        language = languages[number % len(languages)]
        conversation_id = f"eval-{number:04d}"
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        turns = rng.randint(2, 6)
        for turn in range(turns):
            time += rng.randint(30, 600)
            user_id = f"{conversation_id}-u{turn}"
            if rng.random() < 0.55:
                memory_type, values, phrasings = rng.choice((VARIED if args.varied else STATEMENTS)[language])
                value = rng.choice(values)
                text = rng.choice(phrasings).format(v=value)
                gold.append({"conversation_id": conversation_id, "message_id": user_id, "language": language, "type": memory_type, "value": value})
            else:
                text = rng.choice(NEGATIVES[language])
            mapping[user_id] = node(user_id, parent, "user", text, time)
            mapping[parent]["children"].append(user_id)
            assistant_id = f"{conversation_id}-a{turn}"
            mapping[assistant_id] = node(assistant_id, user_id, "assistant", ASSISTANT[language] + " I live in Oslo and I love tea.", time + 5)
            mapping[user_id]["children"].append(assistant_id)
            parent = assistant_id
        conversations.append({"id": conversation_id, "title": f"eval {number}", "create_time": time, "update_time": time, "mapping": mapping, "current_node": parent})
    with open(os.path.join(args.out, "conversations.json"), "w", encoding="utf-8") as out:
        json.dump(conversations, out, ensure_ascii=False)
    with open(os.path.join(args.out, "gold.json"), "w", encoding="utf-8") as out:
        json.dump(gold, out, ensure_ascii=False, indent=0)
    print(f"{len(conversations)} conversations, {len(gold)} expected memories in {args.out}")


if __name__ == "__main__":
    main()
