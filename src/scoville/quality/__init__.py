"""Quality equivalence: does a faster configuration still serve the same model?

Pure statistics (`stats`, `agreement`, `divergence`), task data (`datasets`, `generate`,
`scoring`), the instruments that send the requests (`probe`, `passes`, `outcome`), and a
run's own quality pass with its status rule (`inrun`, refused where it cannot work: `gate`).
"""
