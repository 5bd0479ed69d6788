"""Quality assurance of de-identified output: samples for human review, their marks, and the release gate.

Flow: `jobs.qa_sample` draws a stratified sample of de-identified reports and
writes, per sample, an HTML report (`html_report`) and a review JSONL
(`review`); reviewers mark missed PHI and over-masked clinical content;
`jobs.qa_ingest_review` reads the marks back and computes rates with exact
upper confidence bounds (`stats`); `jobs.publish` refuses a batch whose
model's latest reviewed sample exceeds the configured limit (`gate`).
"""
