"""Quality equivalence: does a faster configuration still serve the same model?

Pure statistics (`stats`, `agreement`, `divergence`), task data (`datasets`, `generate`,
`scoring`), and the instruments that send the requests (`probe`, `passes`, `outcome`).
"""
